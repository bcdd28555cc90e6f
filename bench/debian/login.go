package debian

import (
	"context"
	"fmt"
	"net"
	"time"

	"golang.org/x/crypto/ssh"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Bounds of the SSH probes.
const (
	// ProbeInterval is how often a login is tried until one succeeds.
	ProbeInterval = 500 * time.Millisecond
	// ConnectTimeout bounds the TCP connect: a guest whose NIC is not up
	// yet does not answer at all, and a short bound keeps the probes coming.
	ConnectTimeout = time.Second
	// sessionTimeout bounds the SSH handshake, the login and `true` once
	// connected: sshd under emulation takes a while, and a slow handshake
	// that would succeed must not be cut short.
	sessionTimeout = 20 * time.Second
)

// login connects to addr, logs in as user with signer and runs `true`.
// The guest's host keys are made at its first boot: any is accepted.
func login(ctx context.Context, addr, user string, signer ssh.Signer) error {
	d := net.Dialer{Timeout: ConnectTimeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(sessionTimeout)); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	c, chans, reqs, err := ssh.NewClientConn(conn, addr, &ssh.ClientConfig{
		User:            user,
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(),
	})
	if err != nil {
		return err
	}
	client := ssh.NewClient(c, chans, reqs)
	defer client.Close()
	s, err := client.NewSession()
	if err != nil {
		return fmt.Errorf("open a session: %w", err)
	}
	defer s.Close()
	if err := s.Run("true"); err != nil {
		return fmt.Errorf("run true: %w", err)
	}
	return nil
}

// probe is the outcome of waitLogin.
type probe struct {
	// ready is from start to the end of the first successful login.
	ready time.Duration
	// attempts counts the logins tried, the successful one included.
	attempts int
}

// waitLogin tries a login to addr every ProbeInterval until one succeeds,
// and times it from start. alive, when not nil, is asked before each try
// and ends the wait with its error (a guest that is gone).
func waitLogin(ctx context.Context, addr, user string, signer ssh.Signer, start time.Time, timeout time.Duration, alive func() error) (probe, error) {
	var p probe
	var last error
	err := wait.PollUntilContextTimeout(ctx, ProbeInterval, timeout, true, func(ctx context.Context) (bool, error) {
		if alive != nil {
			if err := alive(); err != nil {
				return false, err
			}
		}
		p.attempts++
		if last = login(ctx, addr, user, signer); last != nil {
			return false, nil
		}
		p.ready = time.Since(start)
		return true, nil
	})
	if err != nil {
		return p, fmt.Errorf("SSH login as %s at %s (%d attempts, last: %v): %w", user, addr, p.attempts, last, err)
	}
	return p, nil
}
