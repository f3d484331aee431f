/*
 * libFuzzer target for the manifest parser: any bytes.  Manifests sit
 * beside the canonical file, where anyone who can write the directory can
 * put one, and every open parses them.  The parser must return an error or
 * a manifest that formats back into text that parses to the same manifest,
 * never touching memory outside the input (AddressSanitizer watches).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct logfs_manifest m, again;
    struct logfs_error err;
    char *text;
    size_t len;

    if (logfs_manifest_parse((const char *)data, size, &m, &err) != LOGFS_OK)
        return 0;
    if (logfs_manifest_format(&m, &text, &len) == LOGFS_OK) {
        if (logfs_manifest_parse(text, len, &again, &err) != LOGFS_OK)
            abort(); /* what we write we must read */
        if (again.file_id != m.file_id || again.nwriters != m.nwriters)
            abort();
        for (uint32_t r = 0; r < m.nwriters; r++)
            if (strcmp(again.w[r].host, m.w[r].host) || strcmp(again.w[r].metalog, m.w[r].metalog) ||
                again.w[r].epochs != m.w[r].epochs)
                abort();
        logfs_manifest_free(&again);
        free(text);
    }
    logfs_manifest_free(&m);
    return 0;
}
