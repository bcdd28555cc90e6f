package dhcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"
	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"
)

// Server serves one Config's lease to its guest.
type Server struct {
	cfg Config

	mu    sync.Mutex
	acked netip.Addr
}

// NewServer is a Server for cfg, once cfg is valid.
func NewServer(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("DHCP server: %w", err)
	}
	return &Server{cfg: cfg}, nil
}

// Acked is the address the server last acknowledged to the guest, and
// whether it has acknowledged one: the guest has taken its lease.
func (s *Server) Acked() (netip.Addr, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.acked, s.acked.IsValid()
}

// Serve answers the guest on port 67 of the server interface until ctx is
// done; then it closes its socket and returns nil. It opens the socket in
// the calling thread's network namespace. It fails at once when it cannot
// bind (see the package documentation for what the namespace must allow),
// and when the socket fails.
func (s *Server) Serve(ctx context.Context) error {
	serve, err := s.Listen(ctx)
	if err != nil {
		return err
	}
	return serve()
}

// Listen binds the server's socket, so that a caller learns of a bind
// failure before it starts the guest, and returns the function that serves
// on it until ctx is done, as Serve does.
func (s *Server) Listen(ctx context.Context) (serve func() error, err error) {
	iface := s.cfg.ServerInterface
	logger := klog.FromContext(ctx).WithValues("interface", iface, "mac", s.cfg.MAC.String())
	conn, err := listen(ctx, iface)
	if err != nil {
		return nil, err
	}
	srv, err := server4.NewServer(iface, nil, s.handler(logger), server4.WithConn(conn))
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("DHCP server on %s: %w", iface, err)
	}
	return func() error {
		stop := context.AfterFunc(ctx, func() { srv.Close() })
		defer stop()
		logger.V(2).Info("DHCP server listening", "address", s.cfg.Address)
		err := srv.Serve()
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("DHCP server on %s: %w", iface, err)
	}, nil
}

// listen opens the server's socket: port 67 of every address, bound to
// iface, allowed to broadcast. Unlike server4.NewIPv4UDPConn it does not set
// SO_REUSEPORT, which would let a second server on the same interface take
// part of the guest's requests silently, and it keeps the errno for errors.Is.
func listen(ctx context.Context, iface string) (net.PacketConn, error) {
	var bindToDevice error
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var broadcast error
		err := c.Control(func(fd uintptr) {
			bindToDevice = unix.SetsockoptString(int(fd), unix.SOL_SOCKET, unix.SO_BINDTODEVICE, iface)
			broadcast = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_BROADCAST, 1)
		})
		return errors.Join(err, bindToDevice, broadcast)
	}}
	conn, err := lc.ListenPacket(ctx, "udp4", ":"+strconv.Itoa(dhcpv4.ServerPort))
	switch {
	case err == nil:
		return conn, nil
	case bindToDevice != nil:
		return nil, fmt.Errorf("bind DHCP server to interface %s: %w", iface, bindToDevice)
	case errors.Is(err, unix.EACCES):
		return nil, fmt.Errorf("bind port %d on %s: %w: the pod needs sysctl net.ipv4.ip_unprivileged_port_start=0 (or CAP_NET_BIND_SERVICE)",
			dhcpv4.ServerPort, iface, unix.EACCES)
	case errors.Is(err, unix.EADDRINUSE):
		return nil, fmt.Errorf("bind port %d on %s: %w: another DHCP server listens on this interface",
			dhcpv4.ServerPort, iface, unix.EADDRINUSE)
	default:
		return nil, fmt.Errorf("bind port %d on %s: %w", dhcpv4.ServerPort, iface, err)
	}
}

func (s *Server) handler(logger logr.Logger) server4.Handler {
	return func(conn net.PacketConn, _ net.Addr, req *dhcpv4.DHCPv4) {
		if req.OpCode != dhcpv4.OpcodeBootRequest || !bytes.Equal(req.ClientHWAddr, s.cfg.MAC) {
			// Not our guest: another host on the bridge, or its DHCP server
			// seen by a client.
			return
		}
		reply, err := s.answer(logger, req)
		if err != nil {
			logger.Error(err, "Building DHCP reply failed", "request", req.MessageType().String())
			return
		}
		if reply == nil {
			return
		}
		if _, err := conn.WriteTo(reply.ToBytes(), destination(req, reply)); err != nil {
			logger.Error(err, "Sending DHCP reply failed", "reply", reply.MessageType().String())
			return
		}
		if reply.MessageType() == dhcpv4.MessageTypeAck {
			s.mu.Lock()
			s.acked = s.cfg.Address.Addr()
			s.mu.Unlock()
			logger.V(2).Info("DHCP lease acknowledged", "address", s.cfg.Address)
			if s.cfg.OnAck != nil {
				s.cfg.OnAck(s.cfg.Address.Addr())
			}
		}
	}
}

// answer is the reply to a request of the guest's, or nil when it deserves
// none (RFC 2131, section 4.3). INFORM gets none either: a guest of ours
// has no address it did not get from us.
func (s *Server) answer(logger logr.Logger, req *dhcpv4.DHCPv4) (*dhcpv4.DHCPv4, error) {
	switch req.MessageType() {
	case dhcpv4.MessageTypeDiscover:
		return s.lease(logger, req, dhcpv4.MessageTypeOffer)
	case dhcpv4.MessageTypeRequest:
		if id := req.ServerIdentifier(); id != nil && !id.Equal(s.cfg.ServerAddress.AsSlice()) {
			// The guest took another server's offer.
			return nil, nil
		}
		// SELECTING and INIT-REBOOT name the address in option 50;
		// RENEWING and REBINDING in ciaddr.
		want := req.RequestedIPAddress()
		if want == nil {
			want = req.ClientIPAddr
		}
		if !want.Equal(s.cfg.Address.Addr().AsSlice()) {
			return s.cfg.nak(req, fmt.Sprintf("address %s is not this client's; its lease is %s", want, s.cfg.Address.Addr()))
		}
		return s.lease(logger, req, dhcpv4.MessageTypeAck)
	case dhcpv4.MessageTypeDecline:
		logger.Info("The guest declined its DHCP lease: the address is in use on its link", "address", s.cfg.Address)
	case dhcpv4.MessageTypeRelease:
		logger.V(2).Info("The guest released its DHCP lease", "address", s.cfg.Address)
	}
	return nil, nil
}

func (s *Server) lease(logger logr.Logger, req *dhcpv4.DHCPv4, msgType dhcpv4.MessageType) (*dhcpv4.DHCPv4, error) {
	reply, dropped, err := s.cfg.leaseReply(req, msgType)
	if dropped > 0 {
		logger.Info("Search domains left out of the DHCP reply: it would exceed the client's maximum message size",
			"dropped", s.cfg.SearchDomains[len(s.cfg.SearchDomains)-dropped:])
	}
	return reply, err
}

// destination is where reply to req goes: to a configured client (ciaddr
// set, RENEWING or REBINDING) by unicast, else as a broadcast, since the
// client has no address yet. A NAK always goes as a broadcast, as the
// client's address is what it refuses.
func destination(req, reply *dhcpv4.DHCPv4) *net.UDPAddr {
	if ciaddr := req.ClientIPAddr; reply.MessageType() != dhcpv4.MessageTypeNak && ciaddr != nil && !ciaddr.IsUnspecified() {
		return &net.UDPAddr{IP: ciaddr, Port: dhcpv4.ClientPort}
	}
	return &net.UDPAddr{IP: net.IPv4bcast, Port: dhcpv4.ClientPort}
}
