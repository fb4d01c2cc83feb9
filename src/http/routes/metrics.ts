import Hapi from "@hapi/hapi";

import { MetricsController } from "../controllers/metrics-controller";

/** At the server's root, where Prometheus looks; the same allow-list and API key as the API. */
export const registerMetricsRoute = (server: Hapi.Server, controller: MetricsController): void => {
    server.route({ method: "GET", path: "/metrics", handler: (_request, h) => controller.show(h) });
};
