# Sourced by scripts/demo.sh and scripts/test.sh: ensure_packages NAME... installs the named
# Debian packages that are not installed yet (as root, or through sudo). Callers set
# `script_name` for the messages.

ensure_packages() {
    if ! command -v dpkg >/dev/null 2>&1; then
        echo "${script_name}: no dpkg here; assuming $* (or equivalents) are installed" >&2
        return 0
    fi
    local missing=() package status
    for package in "$@"; do
        status=$(dpkg -s "$package" 2>/dev/null || true)
        [[ "$status" == *"Status: install ok installed"* ]] || missing+=("$package")
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || {
            echo "${script_name}: need root (or sudo) to install: ${missing[*]}" >&2
            exit 1
        }
        sudo=(sudo)
    fi
    echo "== installing ${missing[*]}"
    "${sudo[@]}" apt-get update
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
}
