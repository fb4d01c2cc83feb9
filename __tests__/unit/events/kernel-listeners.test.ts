import { Services } from "@arkecosystem/core-kernel";

import { heardBesides } from "../../../src/events/kernel-listeners";

describe("whether a kernel listener besides the plugin's hears an event", () => {
    const own = { handle: () => undefined };

    it("is no while the plugin's own wildcard listener is the only one", () => {
        const events = new Services.Events.MemoryEventDispatcher();
        events.listen("*", own);
        const isHeard = heardBesides(events, () => own);

        expect(isHeard("webhooks.broadcasted")).toBe(false);
        expect(isHeard("webhooks.failed")).toBe(false);
    });

    it("is yes for a listener the dispatcher would call (of the name, or of every event), from the moment it listens", () => {
        const events = new Services.Events.MemoryEventDispatcher();
        events.listen("*", own);
        const isHeard = heardBesides(events, () => own);

        const forget = events.listen("webhooks.failed", { handle: () => undefined });
        expect(isHeard("webhooks.failed")).toBe(true);
        expect(isHeard("webhooks.broadcasted")).toBe(false);
        forget();
        expect(isHeard("webhooks.failed")).toBe(false);

        // Whatever the dispatcher makes of a listener's pattern, the answer is whether it calls it.
        for (const pattern of ["webhooks.*", "webhooks.broadcasted"]) {
            const patterned = new Services.Events.MemoryEventDispatcher();
            patterned.listen("*", own);
            let called = false;
            patterned.listen(pattern, { handle: () => void (called = true) });
            patterned.dispatchSync("webhooks.broadcasted", {});
            expect(heardBesides(patterned, () => own)("webhooks.broadcasted")).toBe(called);
        }

        const other = new Services.Events.MemoryEventDispatcher();
        other.listen("*", own);
        other.listen("*", { handle: () => undefined });
        expect(heardBesides(other, () => own)("webhooks.broadcasted")).toBe(true);
    });

    it("counts every listener before the plugin has one of its own", () => {
        const events = new Services.Events.MemoryEventDispatcher();
        expect(heardBesides(events, () => undefined)("webhooks.broadcasted")).toBe(false);
        events.listen("*", own);
        expect(heardBesides(events, () => undefined)("webhooks.broadcasted")).toBe(true);
    });
});
