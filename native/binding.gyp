# The native engine: N-API, compiled against the rdkafka.h that node-rdkafka ships and linked by
# soname to librdkafka.so.1 (an empty stand-in made by soname-stub.js, so that it builds before
# node-rdkafka's own build has run); at load time it binds to the librdkafka.so.1 node-rdkafka
# built, already in the process (docs/native.md says why that library and not one of our own).
{
  "variables": {
    "rdkafka_root": "<!(node -p \"require('path').dirname(require.resolve('node-rdkafka/package.json'))\")",
    "soname_dir": "<!(node soname-stub.js)"
  },
  "targets": [
    {
      "target_name": "kdp_native",
      "sources": ["src/addon.c", "src/consume.c", "src/events.c", "src/handle.c", "src/hurry.c", "src/jobs.c", "src/napi.c", "src/produce.c"],
      "include_dirs": ["<(rdkafka_root)/deps/librdkafka/src"],
      "defines": ["NAPI_VERSION=8"],
      "cflags": ["-pthread", "-std=gnu11", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-ignored-qualifiers"],
      "libraries": [
        "-L<(soname_dir)",
        "-Wl,--no-as-needed",
        "-l:librdkafka.so.1",
        "-Wl,-z,now",
        "-pthread",
        "-Wl,-rpath,<(rdkafka_root)/build/deps",
        "-Wl,-rpath,'$$ORIGIN/../../../node-rdkafka/build/deps'",
        "-Wl,-rpath,'$$ORIGIN/../../../../node_modules/node-rdkafka/build/deps'"
      ]
    }
  ]
}
