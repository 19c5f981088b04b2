// A module with dynamic TLS, as a dlopen'd plugin has: 16 bytes, so that glibc's per-thread
// block is a small heap chunk, which the sanitizer allocator often puts 16 bytes into a page.
thread_local char tls_bytes[16];

extern "C" char* tls_module_touch() {
  tls_bytes[0] = 1;
  return tls_bytes;
}
