#!/usr/bin/python3
# The bits of smc-tools (not in Debian 12) that the SMC-R attempt of
# `make bench` needs, over generic netlink:
#   smc-nl.py ueid-add EID              add a user EID (SMC-Rv2 needs one)
#   smc-nl.py pnet-add PNETID ETH IB    put netdev ETH and IB port 1 in PNETID
#   smc-nl.py fallbacks                 "0xCODE clients servers" per reason
#   smc-nl.py stats                     SMC-R v1/v2 connection counters, raw
import socket
import struct
import sys

NETLINK_GENERIC = 16
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 1, 4, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
GENL_ID_CTRL, CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 0x10, 3, 1, 2


def attr(t, payload):
    n = 4 + len(payload)
    return struct.pack("HH", n, t) + payload + b"\0" * ((4 - n % 4) % 4)


def attrs(buf):
    out = []
    while len(buf) >= 4:
        n, t = struct.unpack_from("HH", buf)
        if n < 4:
            break
        out.append((t & 0x3FFF, buf[4:n]))
        buf = buf[(n + 3) & ~3:]
    return out


class Genl:
    def __init__(self):
        self.s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
        self.s.bind((0, 0))
        self.seq = 0

    def request(self, fam, cmd, payload=b"", flags=NLM_F_ACK):
        self.seq += 1
        msg = struct.pack("BBH", cmd, 1, 0) + payload
        self.s.send(struct.pack("IHHII", 16 + len(msg), fam, NLM_F_REQUEST | flags, self.seq, 0) + msg)
        replies = []
        while True:
            data = self.s.recv(65536)
            while data:
                n, typ, _, _, _ = struct.unpack_from("IHHII", data)
                body = data[16:n]
                data = data[(n + 3) & ~3:]
                if typ == NLMSG_ERROR:
                    err = struct.unpack_from("i", body)[0]
                    if err:
                        raise OSError(-err, "netlink: " + str(-err))
                    return replies
                if typ == NLMSG_DONE:
                    return replies
                replies.append(attrs(body[4:]))
            if not flags & NLM_F_DUMP and replies:
                return replies

    def family(self, name):
        for a in self.request(GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
                              attr(CTRL_ATTR_FAMILY_NAME, name.encode() + b"\0"), 0)[0]:
            if a[0] == CTRL_ATTR_FAMILY_ID:
                return struct.unpack("H", a[1][:2])[0]
        raise OSError("no generic netlink family " + name)


def main():
    g = Genl()
    cmd = sys.argv[1]
    if cmd == "ueid-add":
        eid = sys.argv[2].upper().ljust(32)[:32].encode() + b"\0"
        g.request(g.family("SMC_GEN_NETLINK"), 10, attr(1, eid))	# SMC_NETLINK_ADD_UEID
    elif cmd == "pnet-add":
        pnet, eth, ib = sys.argv[2:5]
        fam = g.family("SMC_PNETID")
        z = lambda s: s.encode() + b"\0"
        g.request(fam, 2, attr(1, z(pnet.upper())) + attr(2, z(eth)))	# SMC_PNETID_ADD
        g.request(fam, 2, attr(1, z(pnet.upper())) + attr(3, z(ib)) + attr(4, b"\1"))
    elif cmd == "fallbacks":
        for msg in g.request(g.family("SMC_GEN_NETLINK"), 8, b"", NLM_F_DUMP):	# GET_FBACK_STATS
            for t, nest in msg:
                if t != 8:
                    continue
                d = dict(attrs(nest))
                if 4 in d:
                    cnt = struct.unpack("H", d.get(5, b"\0\0")[:2])[0]
                    kind = "server" if d.get(1, b"\0")[:1] == b"\1" else "client"
                    print("0x%08x %s %d" % (struct.unpack("I", d[4][:4])[0], kind, cnt))
    else:
        sys.exit("usage: smc-nl.py ueid-add EID | pnet-add PNETID ETH IB | fallbacks")


if __name__ == "__main__":
    main()
