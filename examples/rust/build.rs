// Links libsteel. STEEL_LIB_DIR names the directory that holds libsteel.so (a build tree, or
// <prefix>/lib after install); without it the system's linker path is searched. Nothing is
// compiled here: Steel is an ordinary shared library with a C ABI.
fn main() {
    println!("cargo:rerun-if-env-changed=STEEL_LIB_DIR");
    if let Ok(dir) = std::env::var("STEEL_LIB_DIR") {
        println!("cargo:rustc-link-search=native={dir}");
    }
    println!("cargo:rustc-link-lib=dylib=steel");
}
