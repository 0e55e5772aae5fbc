/* Network setup inside the sandbox's own network namespace. */
#ifndef NS_NET_H
#define NS_NET_H

#include <stdint.h>

#include "src/util/error.h"

/* Brings the loopback interface up (the kernel then adds 127.0.0.1/::1):
 * one RTM_NEWLINK request over rtnetlink, acknowledged. */
int ns_net_loopback_up(cl_error *err);
/* A listening TCP socket on 127.0.0.1:port (this netns). */
int ns_net_listen_loopback(uint16_t port, cl_error *err);

#endif
