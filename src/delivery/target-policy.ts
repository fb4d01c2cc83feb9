import { AddressMatcher, compileAddressList } from "../net/address-list";

/**
 * Never connected to, whatever the options: addresses nothing on the internet is, and the cloud
 * providers' metadata services, which hand out credentials to whoever asks from inside.
 */
export const DEFAULT_DENY_TARGETS: readonly string[] = [
    "0.0.0.0/8",
    "169.254.0.0/16", // link-local: AWS, GCP, Azure, DigitalOcean and OpenStack metadata at .169.254
    "100.100.100.200/32", // Alibaba Cloud metadata
    "192.0.0.192/32", // Oracle Cloud metadata
    "224.0.0.0/4",
    "255.255.255.255/32",
    "::/128",
    "fd00:ec2::254/128", // AWS metadata over IPv6
    "fe80::/10",
    "ff00::/8",
];

export interface TargetPolicyOptions {
    allowTargets: readonly string[];
    /** Added to DEFAULT_DENY_TARGETS, or in their place with replaceDefaultDenyTargets. */
    denyTargets: readonly string[];
    replaceDefaultDenyTargets: boolean;
}

/** Decides, for a resolved address, whether a delivery may connect to it; returns the reason when not. */
export type TargetPolicy = (address: string) => string | undefined;

export const deniedTargets = (options: TargetPolicyOptions): readonly string[] =>
    options.replaceDefaultDenyTargets ? options.denyTargets : [...DEFAULT_DENY_TARGETS, ...options.denyTargets];

export const compileTargetPolicy = (options: TargetPolicyOptions): TargetPolicy => {
    const denied: AddressMatcher = compileAddressList(deniedTargets(options), { embedded: true });
    const allowed: AddressMatcher | undefined =
        options.allowTargets.length > 0 ? compileAddressList(options.allowTargets) : undefined;
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
