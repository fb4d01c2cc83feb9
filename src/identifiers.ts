/** Container bindings other plugins may use; Symbol.for so that every copy of the package agrees. */
export const Identifiers = {
    WebhookRegister: Symbol.for("core-wallet-webhooks<WebhookRegister>"),
    DeliveryStore: Symbol.for("core-wallet-webhooks<DeliveryStore>"),
    Listener: Symbol.for("core-wallet-webhooks<Listener>"),
    WalletCatalogue: Symbol.for("core-wallet-webhooks<WalletCatalogue>"),
};
