package dhcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
)

// serveChildEnv makes the test binary an unprivileged launcher instead:
// it serves masqueradeNIC's lease until its stdin closes.
const serveChildEnv = "DHCP_TEST_SERVE_UNPRIVILEGED"

// nobody is the UID and GID the unprivileged launcher runs as.
const nobody = 65534

func TestMain(m *testing.M) {
	if os.Getenv(serveChildEnv) != "" {
		os.Exit(serveUnprivileged())
	}
	os.Exit(m.Run())
}

func serveUnprivileged() int {
	if caps, err := effectiveCapabilities(); err != nil || caps != "0000000000000000" {
		fmt.Fprintf(os.Stderr, "the child is not unprivileged: CapEff %q, %v\n", caps, err)
		return 2
	}
	cfg, err := NewConfig(masqueradeNIC(), podDNS, podSearch, guestHostname)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	srv, err := NewServer(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	if err := srv.Serve(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func effectiveCapabilities() (string, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "CapEff:"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", errors.New("no CapEff in /proc/self/status")
}

// TestUnprivileged runs the server as the launcher does, as a user without
// capabilities, in a namespace that allows (or does not allow) such users
// port 67.
func TestUnprivileged(t *testing.T) {
	requireRoot(t)
	bin := executableByNobody(t)
	tests := []struct {
		name          string
		portStart     string
		wantServed    bool
		wantErrSubstr string
	}{
		{
			name:          "ip_unprivileged_port_start=1024 (the default): a clear error",
			portStart:     "1024",
			wantErrSubstr: "bind port 67 on k6t-eth0: permission denied: the pod needs sysctl net.ipv4.ip_unprivileged_port_start=0",
		},
		{
			name:       "ip_unprivileged_port_start=0: serves",
			portStart:  "0",
			wantServed: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLink(t, netip.MustParsePrefix("198.19.255.1/24"), guestMAC)
			err := inNetns(l.server, func() error {
				return os.WriteFile("/proc/sys/net/ipv4/ip_unprivileged_port_start", []byte(tt.portStart), 0)
			})
			if err != nil {
				t.Fatalf("set ip_unprivileged_port_start in the server namespace: %v", err)
			}

			cmd := exec.Command(bin, "-test.run=^$")
			cmd.Env = []string{serveChildEnv + "=1"}
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			// The child inherits the namespace of the thread that forks it.
			if err := inNetns(l.server, cmd.Start); err != nil {
				t.Fatalf("start the unprivileged server: %v", err)
			}
			var exitErr error
			exited := make(chan struct{})
			go func() {
				exitErr = cmd.Wait()
				close(exited)
			}()
			t.Cleanup(func() {
				stdin.Close()
				select {
				case <-exited:
				case <-time.After(10 * time.Second):
					cmd.Process.Kill()
					<-exited
				}
			})

			if !tt.wantServed {
				select {
				case <-exited:
					if exitErr == nil || !strings.Contains(stderr.String(), tt.wantErrSubstr) {
						t.Fatalf("unprivileged server: exit %v, stderr %q; want a failure saying %q", exitErr, stderr.String(), tt.wantErrSubstr)
					}
				case <-time.After(30 * time.Second):
					t.Fatal("the unprivileged server did not fail within 30s")
				}
				return
			}

			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			client := newClient(t, l.guest, nclient4.WithTimeout(time.Second), nclient4.WithRetry(10))
			lease, err := client.Request(ctx)
			if err != nil {
				t.Fatalf("lease from the unprivileged server: %v (its stderr: %q)", err, stderr.String())
			}
			if got := lease.ACK.YourIPAddr.String(); got != "198.19.255.2" {
				t.Errorf("leased address: got %s, want 198.19.255.2", got)
			}
			stdin.Close()
			select {
			case <-exited:
				if exitErr != nil {
					t.Errorf("unprivileged server: exit %v, stderr %q; want a clean stop", exitErr, stderr.String())
				}
			case <-time.After(10 * time.Second):
				t.Error("the unprivileged server did not stop within 10s of its stdin closing")
			}
		})
	}
}

// executableByNobody is a copy of the test binary that an unprivileged
// user may run (go test builds it in a directory only root can enter).
func executableByNobody(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "dhcp-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	content, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "dhcp.test")
	if err := os.WriteFile(bin, content, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}
