#include <stdlib.h>
#include "buffer.h"

/* A growable byte buffer. */
struct buffer {
    char *data;
    size_t len;
};

typedef struct {
    int x, y;
} point;

enum mode { READ, WRITE };

// Make an empty buffer.
struct buffer *buffer_new(void)
{
    return calloc(1, sizeof(struct buffer));
}

static int buffer_len(const struct buffer *b) {
    return (int)b->len;
}
