// Tables of the webhooks area. Times are epoch milliseconds; the payload is JSON text.
export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed' | 'cancelled';

export interface WebhookTables {
  webhook_deliveries: {
    /** Also the `webhook-id` header: the same for every attempt of one event. */
    id: string;
    project_id: string;
    event_type: string;
    /** The exact request body (JSON text), identical on every attempt. */
    payload: string;
    status: WebhookDeliveryStatus;
    /** Attempts started so far. */
    attempts: number;
    /** When a pending delivery is due; while an attempt runs, when its claim expires. Null once final. */
    next_attempt_at: number | null;
    last_status_code: number | null;
    last_error: string | null;
    created_at: number;
    updated_at: number;
    delivered_at: number | null;
  };
}
