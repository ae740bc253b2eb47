// The corpus driver: runs a fuzz target's LLVMFuzzerTestOneInput on every file of its corpus
// without libFuzzer, so the corpora replay as ordinary regression tests with gcc (ctest runs
// fuzz_corpus_*). A failing input aborts the process like it would under libFuzzer; the driver
// names each file before running it, so the culprit is the last name printed with --verbose.
//
//   fuzz_snapshot_load_replay [--verbose] fuzz/corpus/snapshot_load [more files or folders]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <string>
#include <sys/stat.h>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool read_whole(const std::string& path, std::vector<uint8_t>& bytes) {
    FILE* file = std::fopen(path.c_str(), "rb");
    if (!file) return false;
    bytes.clear();
    uint8_t chunk[65536];
    size_t got;
    while ((got = std::fread(chunk, 1, sizeof(chunk), file)) > 0)
        bytes.insert(bytes.end(), chunk, chunk + got);
    const bool ok = !std::ferror(file);
    std::fclose(file);
    return ok;
}

void collect(const std::string& path, std::vector<std::string>& files) {
    struct stat info;
    if (::stat(path.c_str(), &info) != 0) return;
    if (!S_ISDIR(info.st_mode)) {
        files.push_back(path);
        return;
    }
    DIR* folder = ::opendir(path.c_str());
    if (!folder) return;
    while (const dirent* entry = ::readdir(folder))
        if (entry->d_name[0] != '.') collect(path + "/" + entry->d_name, files);
    ::closedir(folder);
}

} // namespace

int main(int argc, char** argv) {
    bool verbose = false;
    std::vector<std::string> files;
    for (int k = 1; k < argc; ++k) {
        if (std::strcmp(argv[k], "--verbose") == 0) {
            verbose = true;
            continue;
        }
        const size_t before = files.size();
        collect(argv[k], files);
        if (files.size() == before) {
            std::fprintf(stderr, "%s: nothing to replay at '%s'\n", argv[0], argv[k]);
            return 1;
        }
    }
    if (files.empty()) {
        std::fprintf(stderr, "usage: %s [--verbose] CORPUS_DIR_OR_FILE...\n", argv[0]);
        return 1;
    }
    std::sort(files.begin(), files.end());
    std::vector<uint8_t> bytes;
    for (const std::string& file : files) {
        if (!read_whole(file, bytes)) {
            std::fprintf(stderr, "%s: cannot read '%s'\n", argv[0], file.c_str());
            return 1;
        }
        if (verbose) std::fprintf(stderr, "%s (%zu bytes)\n", file.c_str(), bytes.size());
        // A copy of exactly the file's size, so ASan sees a read past the end as libFuzzer would.
        std::vector<uint8_t> input(bytes);
        LLVMFuzzerTestOneInput(input.empty() ? nullptr : input.data(), input.size());
    }
    std::printf("%zu inputs replayed without a failure\n", files.size());
    return 0;
}
