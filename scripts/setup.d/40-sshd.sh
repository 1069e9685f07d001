#!/usr/bin/env bash
# OpenSSH server and client for tests/profile/test_ssh.py: the test itself starts `sshd -D` on a
# free port of 127.0.0.1 with throwaway keys in a temporary directory; this only installs the
# package (and never enables or starts the system service). Idempotent and quiet.
set -euo pipefail
if [ ! -x /usr/sbin/sshd ] || ! command -v ssh >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then  # keep the package's postinst from starting a service
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
        policy=1
    fi
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends openssh-server openssh-client >/dev/null
    if [ -n "$policy" ]; then rm -f /usr/sbin/policy-rc.d; fi
fi
mkdir -p /run/sshd
