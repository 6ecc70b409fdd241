/* send_traces — see send_traces.h. */
#include "tools/send_traces.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "stream/error.h"

int send_traces_f32_named(void *sock, const struct wire_traces_hdr *h, const float *data,
                          int64_t sender_seq)
{
    if (!h->chan)
        return wire_send_traces_f32(sock, h, data, sender_seq, 0);
    struct wire_traces_hdr c = *h;
    c.format = WIRE_F32;
    char *js = wire_encode_traces_header(&c, sender_seq);
    json_t *o = js ? json_loads(js, 0, NULL) : NULL;
    free(js);
    if (!o)
        return err_set(-ENOMEM, "trace block header: out of memory");
    json_t *names = json_array();
    for (int r = 0; r < h->nrec; r++) {
        char id[64];
        snprintf(id, sizeof id, "%s.%s.%s.%s", h->chan[r].net, h->chan[r].sta, h->chan[r].loc,
                 h->chan[r].cha);
        json_array_append_new(names, json_string(id));
    }
    json_object_set_new(o, "channels", names);
    js = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!js)
        return err_set(-ENOMEM, "trace block header: out of memory");
    size_t n = (size_t)h->nrec * (size_t)h->ns * sizeof(float);
    int rc = 0;
    if (zmq_send(sock, js, strlen(js), ZMQ_SNDMORE) < 0 || zmq_send(sock, data, n, 0) < 0)
        rc = err_set(-errno, "zmq_send trace block: %s", zmq_strerror(errno));
    free(js);
    return rc;
}
