import { AddressMatcher, compileAddressList } from "../net/address-list";

export interface TargetPolicyOptions {
    allowTargets: readonly string[];
    denyTargets: readonly string[];
}

/** Decides, for a resolved address, whether a delivery may connect to it; returns the reason when not. */
export type TargetPolicy = (address: string) => string | undefined;

export const compileTargetPolicy = ({ allowTargets, denyTargets }: TargetPolicyOptions): TargetPolicy => {
    const denied: AddressMatcher = compileAddressList(denyTargets);
    const allowed: AddressMatcher | undefined = allowTargets.length > 0 ? compileAddressList(allowTargets) : undefined;
    return (address) => {
        if (denied(address)) {
            return `${address} is in delivery.denyTargets`;
        }
        if (allowed && !allowed(address)) {
            return `${address} is not in delivery.allowTargets`;
        }
        return undefined;
    };
};
