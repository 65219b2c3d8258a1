// Tables of the analytics area (filled in by the analytics work).
// biome-ignore lint/suspicious/noEmptyInterface: extended as the area grows
export interface AnalyticsTables {}
