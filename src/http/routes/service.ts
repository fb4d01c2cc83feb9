import Hapi from "@hapi/hapi";

import { ServiceController } from "../controllers/service-controller";

export const registerServiceRoutes = (server: Hapi.Server, controller: ServiceController): void => {
    server.route({ method: "GET", path: "/", handler: () => controller.show() });
};
