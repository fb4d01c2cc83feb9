export * from "./service-provider";
export * from "./defaults";
export * from "./contracts";
export * from "./identifiers";
export { WebhookRegister } from "./webhooks/webhook-register";
export { DeliveryStore } from "./store/delivery-store";
