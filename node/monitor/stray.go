package monitor

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/node/podfs"
)

// Stray is a short-lived connection to a launcher no VMI of this node
// claims: a launcher left over from a VMI that ended, went to another node
// or was replaced. It is not watched; the handler asks what its domain does
// and destroys it. Everything it answers is the pod's, not to be trusted
// beyond the pod itself: a launcher that lies only keeps or loses its own
// guest.
type Stray struct {
	cfg Config
	// dialErr is the last dial's error: gRPC answers Unavailable, this
	// says why (fs.ErrNotExist: no socket).
	mu      sync.Mutex
	dialErr error
	conn    *grpc.ClientConn
	client  apiv1.LauncherClient
}

// DialStray connects to the launcher socket in dir. The connection is made
// by the first call; Close it when done.
func DialStray(cfg Config, dir podfs.Dir) (*Stray, error) {
	s := &Stray{cfg: cfg}
	conn, err := grpc.NewClient("passthrough:///launcher",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			c, err := dir.Dial(ctx, LauncherSocketName)
			s.mu.Lock()
			s.dialErr = err
			s.mu.Unlock()
			return c, err
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("launcher client for %s: %w", dir, err)
	}
	s.conn, s.client = conn, apiv1.NewLauncherClient(conn)
	return s, nil
}

// Close closes the connection.
func (s *Stray) Close() { _ = s.conn.Close() }

// GetDomain is the launcher's domain as it is now.
func (s *Stray) GetDomain(ctx context.Context) (*apiv1.Domain, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	resp, err := s.client.GetDomain(ctx, &apiv1.GetDomainRequest{})
	if err != nil {
		return nil, fmt.Errorf("get domain: %w", s.why(err))
	}
	return resp.GetDomain(), nil
}

// Kill destroys the launcher's domain at once (no ACPI: the guest's
// VMI has ended or moved on, and whatever it writes now may be written by
// another instance of it too).
func (s *Stray) Kill(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	if _, err := s.client.Kill(ctx, &apiv1.KillRequest{}); err != nil {
		return fmt.Errorf("kill domain: %w", s.why(err))
	}
	return nil
}

// why is the dial's error behind a call that failed Unavailable.
func (s *Stray) why(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if status.Code(err) == codes.Unavailable && s.dialErr != nil {
		return s.dialErr
	}
	return err
}

func (s *Stray) timeout() time.Duration {
	if s.cfg.CallTimeout > 0 {
		return s.cfg.CallTimeout
	}
	return DefaultConfig.CallTimeout
}

// Running reports whether d is a domain that was started and has not
// ended: a guest that may be running.
func Running(d *apiv1.Domain) bool {
	switch d.GetState() {
	case apiv1.DomainState_DOMAIN_STATE_UNSPECIFIED, apiv1.DomainState_DOMAIN_STATE_ABSENT, apiv1.DomainState_DOMAIN_STATE_SHUTOFF:
		// Absent, or defined and never started (an ended one is Ended).
		return false
	}
	return !Ended(d)
}
