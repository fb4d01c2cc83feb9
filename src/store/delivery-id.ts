import { v7 } from "uuid";

/**
 * A delivery's id, sent as `webhook-id`: a UUIDv7, so ids grow with time and each new delivery
 * lands at the end of the outbox's id index instead of at a random page of it.
 */
export const newDeliveryId = (): string => v7();
