import { Contracts } from "@arkecosystem/core-kernel";

/**
 * Whether a kernel listener besides `own` hears events of a name: the kernel's dispatcher gives a
 * name's listeners as it would call them (its wildcard listeners, and those of every pattern the
 * name matches), so asking costs what one dispatch costs.
 */
export const heardBesides =
    (
        events: Pick<Contracts.Kernel.EventDispatcher, "getListeners">,
        own: () => Contracts.Kernel.EventListener | undefined,
    ): ((name: string) => boolean) =>
    (name) => {
        const mine = own();
        return events.getListeners(name).some((listener) => listener !== mine);
    };
