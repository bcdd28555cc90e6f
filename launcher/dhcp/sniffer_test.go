package dhcp

import (
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/mdlayher/packet"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// sniffer sees the DHCP replies on the guest's link as IP packets, to check
// where the server addressed them: the client under test reads only the
// DHCP message.
type sniffer struct {
	replies chan sniffedReply
}

type sniffedReply struct {
	dst netip.Addr
	msg *dhcpv4.DHCPv4
}

func sniff(t *testing.T, ns netns.NsHandle, ifname string) *sniffer {
	t.Helper()
	var conn *packet.Conn
	err := inNetns(ns, func() error {
		ifi, err := net.InterfaceByName(ifname)
		if err != nil {
			return err
		}
		conn, err = packet.Listen(ifi, packet.Datagram, unix.ETH_P_IP, nil)
		return err
	})
	if err != nil {
		t.Fatalf("packet socket on %s: %v", ifname, err)
	}
	s := &sniffer{replies: make(chan sniffedReply, 64)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 65536)
		for {
			n, _, err := conn.ReadFrom(buf)
			if err != nil {
				return
			}
			if r, ok := parseReply(buf[:n]); ok {
				select {
				case s.replies <- r:
				default: // nobody is looking for it
				}
			}
		}
	}()
	t.Cleanup(func() {
		conn.Close()
		<-done
	})
	return s
}

// parseReply is the DHCP reply in an IPv4 packet: UDP from port 67 to 68.
func parseReply(p []byte) (sniffedReply, bool) {
	if len(p) < 20 || p[0]>>4 != 4 || p[9] != unix.IPPROTO_UDP {
		return sniffedReply{}, false
	}
	ihl := int(p[0]&0x0f) * 4
	if len(p) < ihl+8 {
		return sniffedReply{}, false
	}
	udp := p[ihl:]
	if binary.BigEndian.Uint16(udp[0:2]) != dhcpv4.ServerPort || binary.BigEndian.Uint16(udp[2:4]) != dhcpv4.ClientPort {
		return sniffedReply{}, false
	}
	msg, err := dhcpv4.FromBytes(udp[8:])
	if err != nil {
		return sniffedReply{}, false
	}
	return sniffedReply{dst: netip.AddrFrom4([4]byte(p[16:20])), msg: msg}, true
}

// destination waits for the reply of type msgType in transaction xid and
// returns its IP destination.
func (s *sniffer) destination(t *testing.T, xid dhcpv4.TransactionID, msgType dhcpv4.MessageType) netip.Addr {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case r := <-s.replies:
			if r.msg.TransactionID == xid && r.msg.MessageType() == msgType {
				return r.dst
			}
		case <-deadline:
			t.Fatalf("no %s in transaction %s seen on the guest's link", msgType, xid)
		}
	}
}
