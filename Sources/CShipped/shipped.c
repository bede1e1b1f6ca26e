// The files credemu needs at run time (packs, shim, OpenAPI document, the console's page) and its VERSION, compiled in with C23 `#embed`, so the executable runs from anywhere.
// Clang lists each embedded file in the object's dependency file, so SwiftPM recompiles this file when one
// changes. A file added to providers/ must be added here too: ShippedFileTests fails until it is.
#include "shipped.h"

#pragma clang diagnostic ignored "-Wc23-extensions"

static const unsigned char pack_1password[] = {
#embed "../../providers/1password.json"
};
static const unsigned char pack_apple[] = {
#embed "../../providers/apple.json"
};
static const unsigned char pack_bitwarden[] = {
#embed "../../providers/bitwarden.json"
};
static const unsigned char pack_edge[] = {
#embed "../../providers/edge.json"
};
static const unsigned char pack_generic_third_party[] = {
#embed "../../providers/generic-third-party.json"
};
static const unsigned char pack_gpm_pre_m144[] = {
#embed "../../providers/gpm-pre-m144.json"
};
static const unsigned char pack_gpm[] = {
#embed "../../providers/gpm.json"
};
static const unsigned char pack_security_key[] = {
#embed "../../providers/security-key.json"
};
static const unsigned char pack_keepassxc[] = {
#embed "../../providers/keepassxc.json"
};
static const unsigned char pack_proton_pass[] = {
#embed "../../providers/proton-pass.json"
};
static const unsigned char pack_windows_hello[] = {
#embed "../../providers/windows-hello.json"
};
static const unsigned char shim_js[] = {
#embed "../CredemuServer/Resources/shim.js"
};
static const unsigned char openapi_json[] = {
#embed "../CredemuServer/Resources/openapi.json"
};
static const unsigned char console_html[] = {
#embed "../CredemuServer/Resources/console.html"
};
static const unsigned char console_js[] = {
#embed "../CredemuServer/Resources/console.js"
};
static const unsigned char console_css[] = {
#embed "../CredemuServer/Resources/console.css"
};
static const unsigned char console_svg[] = {
#embed "../CredemuServer/Resources/console.svg"
};
static const unsigned char demo_shop_html[] = {
#embed "../CredemuServer/Resources/demo-shop.html"
};
static const unsigned char demo_shop_js[] = {
#embed "../CredemuServer/Resources/demo-shop.js"
};
static const unsigned char demo_shop_css[] = {
#embed "../CredemuServer/Resources/demo-shop.css"
};
static const unsigned char demo_shop_svg[] = {
#embed "../CredemuServer/Resources/demo-shop.svg"
};
static const unsigned char version[] = {
#embed "../../VERSION"
};

// The commit built from, which the Makefile writes before every build (`make commit-stamp`); a build without it
// (plain `swift build` in a fresh tree) ships an empty one.
#if __has_embed("../../.build/credemu-commit")
static const unsigned char commit[] = {
#embed "../../.build/credemu-commit"
};
#else
static const unsigned char commit[] = { ' ' };
#endif

#define FILE_ENTRY(path, name) { path, name, sizeof name }

static const credemu_shipped_file files[] = {
    FILE_ENTRY("providers/1password.json", pack_1password),
    FILE_ENTRY("providers/apple.json", pack_apple),
    FILE_ENTRY("providers/bitwarden.json", pack_bitwarden),
    FILE_ENTRY("providers/edge.json", pack_edge),
    FILE_ENTRY("providers/generic-third-party.json", pack_generic_third_party),
    FILE_ENTRY("providers/gpm-pre-m144.json", pack_gpm_pre_m144),
    FILE_ENTRY("providers/gpm.json", pack_gpm),
    FILE_ENTRY("providers/keepassxc.json", pack_keepassxc),
    FILE_ENTRY("providers/proton-pass.json", pack_proton_pass),
    FILE_ENTRY("providers/security-key.json", pack_security_key),
    FILE_ENTRY("providers/windows-hello.json", pack_windows_hello),
    FILE_ENTRY("Sources/CredemuServer/Resources/shim.js", shim_js),
    FILE_ENTRY("Sources/CredemuServer/Resources/openapi.json", openapi_json),
    FILE_ENTRY("Sources/CredemuServer/Resources/console.html", console_html),
    FILE_ENTRY("Sources/CredemuServer/Resources/console.js", console_js),
    FILE_ENTRY("Sources/CredemuServer/Resources/console.css", console_css),
    FILE_ENTRY("Sources/CredemuServer/Resources/console.svg", console_svg),
    FILE_ENTRY("Sources/CredemuServer/Resources/demo-shop.html", demo_shop_html),
    FILE_ENTRY("Sources/CredemuServer/Resources/demo-shop.js", demo_shop_js),
    FILE_ENTRY("Sources/CredemuServer/Resources/demo-shop.css", demo_shop_css),
    FILE_ENTRY("Sources/CredemuServer/Resources/demo-shop.svg", demo_shop_svg),
    FILE_ENTRY("VERSION", version),
    FILE_ENTRY("COMMIT", commit),
};

const credemu_shipped_file *credemu_shipped_files(size_t *count) {
    *count = sizeof files / sizeof files[0];
    return files;
}
