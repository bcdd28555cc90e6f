package debian

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// testKey is a client key for the tests.
func testKey(t *testing.T) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sshServer is a guest's sshd on a loopback port: it lets user in with
// key once accept says so, and runs `true` (exit 0) and nothing else.
// It returns its address; it stops when the test ends.
func sshServer(t *testing.T, user string, key ssh.PublicKey, accept func() bool) string {
	t.Helper()
	cfg := &ssh.ServerConfig{PublicKeyCallback: func(c ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
		if c.User() == user && bytes.Equal(k.Marshal(), key.Marshal()) && accept() {
			return nil, nil
		}
		return nil, fmt.Errorf("denied")
	}}
	cfg.AddHostKey(testKey(t))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go serveSSH(c, cfg)
		}
	}()
	return l.Addr().String()
}

func serveSSH(c net.Conn, cfg *ssh.ServerConfig) {
	defer c.Close()
	_, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "sessions only")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			return
		}
		go func() {
			defer ch.Close()
			for r := range creqs {
				if r.Type != "exec" {
					_ = r.Reply(false, nil)
					continue
				}
				var cmd struct{ Command string }
				_ = ssh.Unmarshal(r.Payload, &cmd)
				_ = r.Reply(true, nil)
				status := uint32(127)
				if cmd.Command == "true" {
					status = 0
				}
				_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{status}))
				return
			}
		}()
	}
}

// Logins are tried until the guest lets the key in (cloud-init put it in
// place), and the time is the successful one's end.
func TestWaitLoginUntilAccepted(t *testing.T) {
	key := testKey(t)
	var tries atomic.Int32
	addr := sshServer(t, "debian", key.PublicKey(), func() bool { return tries.Add(1) > 2 })
	start := time.Now()
	p, err := waitLogin(t.Context(), addr, "debian", key, start, 30*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.attempts != 3 || tries.Load() != 3 {
		t.Errorf("%d attempts (%d at the server), want 3", p.attempts, tries.Load())
	}
	// Two failed tries, ProbeInterval apart from the first.
	if p.ready < 2*ProbeInterval || p.ready > time.Since(start) {
		t.Errorf("ready after %s, want between %s and %s", p.ready, 2*ProbeInterval, time.Since(start))
	}
}

// A wrong user or key never logs in: the wait ends at its timeout, saying
// why the last try failed.
func TestWaitLoginTimesOut(t *testing.T) {
	key := testKey(t)
	addr := sshServer(t, "debian", key.PublicKey(), func() bool { return true })
	_, err := waitLogin(t.Context(), addr, "root", key, time.Now(), 1200*time.Millisecond, nil)
	if err == nil || !strings.Contains(err.Error(), "unable to authenticate") || !strings.Contains(err.Error(), "SSH login as root at "+addr) {
		t.Fatalf("err = %v, want a timeout naming the failed authentication", err)
	}
	_, err = waitLogin(t.Context(), addr, "debian", testKey(t), time.Now(), 1200*time.Millisecond, nil)
	if err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Fatalf("another key: err = %v, want a failed authentication", err)
	}
}

// A guest that is gone ends the wait at once with why.
func TestWaitLoginEndsWithTheGuest(t *testing.T) {
	// A port nobody listens on: connections are refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var asked int
	alive := func() error {
		if asked++; asked == 3 {
			return errors.New("raw libvirt exited")
		}
		return nil
	}
	start := time.Now()
	p, err := waitLogin(t.Context(), addr, "debian", testKey(t), start, time.Minute, alive)
	if err == nil || !strings.Contains(err.Error(), "raw libvirt exited") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("err = %v, want the guest's end and the last refusal", err)
	}
	if p.attempts != 2 || time.Since(start) > 30*time.Second {
		t.Errorf("%d attempts in %s, want 2 and no wait for the timeout", p.attempts, time.Since(start))
	}
}
