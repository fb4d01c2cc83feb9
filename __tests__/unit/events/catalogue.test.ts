import { EVENT_CATALOGUE } from "../../../src/events/catalogue";
import kernelEvents from "../../fixtures/node-samples/kernel-event-enums.json";

// Rows of the interface's Events table that the 3.9.1 kernel dispatches under names of its own enums' modules.
const INTERFACE_ONLY = [
    "blockchain.synced",
    "database.preConnect",
    "database.postConnect",
    "database.preDisconnect",
    "database.postDisconnect",
    "delegate.productivityChanged",
];

describe("the event catalogue", () => {
    it("holds only events: each name is a 3.9.1 kernel event or a row of the interface's Events table", () => {
        const known = new Set([...Object.values(kernelEvents).flat(), ...INTERFACE_ONLY]);

        expect(EVENT_CATALOGUE.map((entry) => entry.name).filter((name) => !known.has(name))).toEqual([]);
    });

    it("offers every event of the kernel's enums", () => {
        const offered = new Set(EVENT_CATALOGUE.map((entry) => entry.name));

        expect(
            Object.values(kernelEvents)
                .flat()
                .filter((name) => !offered.has(name)),
        ).toEqual([]);
    });
});
