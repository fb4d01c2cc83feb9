import Boom from "@hapi/boom";
import Hapi from "@hapi/hapi";

/** Validation failures answer 422 with Joi's message, which names the field and what is wrong. */
export const failValidation: Hapi.Lifecycle.Method = (_request, _h, error) => {
    throw Boom.badData(error?.message ?? "invalid request");
};
