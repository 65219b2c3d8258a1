// Tables of the jobs area (filled in by the jobs work).
// biome-ignore lint/suspicious/noEmptyInterface: extended as the area grows
export interface JobsTables {}
