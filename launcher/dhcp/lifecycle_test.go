package dhcp

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
	"golang.org/x/sys/unix"
)

func TestServeStopsWithItsContext(t *testing.T) {
	requireRoot(t)
	l := newLink(t, netip.MustParsePrefix("198.19.255.1/24"), guestMAC)
	cfg, err := NewConfig(masqueradeNIC(), podDNS, podSearch, guestHostname)
	if err != nil {
		t.Fatalf("NewConfig: %v", err)
	}
	srv, err := NewServer(cfg)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- inNetns(l.server, func() error { return srv.Serve(ctx) }) }()

	client := newClient(t, l.guest, nclient4.WithTimeout(time.Second), nclient4.WithRetry(10))
	if _, err := client.Request(ctx); err != nil {
		t.Fatalf("DHCP exchange: %v", err)
	}

	listenOnBridge := func() error {
		return inNetns(l.server, func() error {
			conn, err := listen(t.Context(), serverBridge)
			if err == nil {
				conn.Close()
			}
			return err
		})
	}
	err = listenOnBridge()
	if !errors.Is(err, unix.EADDRINUSE) || !strings.Contains(err.Error(), "another DHCP server listens on this interface") {
		t.Errorf("a second server on %s while the first serves: got %v, want EADDRINUSE that says so", serverBridge, err)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve after its context was cancelled: got %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return within 10s of its context's cancellation")
	}
	if err := listenOnBridge(); err != nil {
		t.Errorf("port 67 on %s after Serve returned: %v; want it free", serverBridge, err)
	}
}

func TestServeNoSuchInterface(t *testing.T) {
	requireRoot(t)
	ns := newNetns(t)
	cfg, err := NewConfig(masqueradeNIC(), nil, nil, "")
	if err != nil {
		t.Fatalf("NewConfig: %v", err)
	}
	cfg.ServerInterface = "k6t-missing"
	srv, err := NewServer(cfg)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	err = inNetns(ns, func() error { return srv.Serve(t.Context()) })
	if !errors.Is(err, unix.ENODEV) || !strings.Contains(err.Error(), "bind DHCP server to interface k6t-missing") {
		t.Fatalf("Serve on a missing interface: got %v, want ENODEV naming the interface", err)
	}
}
