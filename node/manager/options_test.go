package manager

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestOptions(t *testing.T) {
	tests := []struct {
		name    string
		env     string
		args    []string
		wantErr string
	}{
		{name: "node from the downward API", env: "node-1"},
		{name: "node from the flag", args: []string{"--node-name=node-2"}},
		{name: "no node", wantErr: "--node-name"},
		{name: "no workers", env: "node-1", args: []string{"--workers=0"}, wantErr: "--workers"},
		{name: "no heartbeat", env: "node-1", args: []string{"--heartbeat-interval=0s"}, wantErr: "--heartbeat-interval"},
		{name: "no kubelet root", env: "node-1", args: []string{"--kubelet-root="}, wantErr: "--kubelet-root"},
		{name: "launchers as the image's user", env: "node-1", args: []string{"--launcher-run-as-user=-1"}},
		{name: "no launcher user", env: "node-1", args: []string{"--launcher-run-as-user=-2"}, wantErr: "--launcher-run-as-user"},
		{name: "launchers as root", env: "node-1", args: []string{"--launcher-run-as-user=0"}, wantErr: "must not be 0"},
		{name: "no sync timeout", env: "node-1", args: []string{"--launcher-sync-timeout=0s"}, wantErr: "timeouts"},
		{name: "guest access without a client CA", env: "node-1", args: []string{"--guest-access-client-ca-file="}, wantErr: "--guest-access-client-ca-file"},
		{name: "guest access without a certificate store", env: "node-1", args: []string{"--guest-access-cert-store-dir="}, wantErr: "--guest-access-cert-store-dir"},
		{name: "certificate lifetime below the API's minimum", env: "node-1", args: []string{"--guest-access-cert-lifetime=5m"}, wantErr: "--guest-access-cert-lifetime"},
		{name: "pod IPs", env: "node-1", args: []string{"--pod-ips=198.18.0.5,fd00::5"}},
		{name: "a pod IP that is not one", env: "node-1", args: []string{"--pod-ips=node-1"}, wantErr: "--pod-ips"},
		{name: "guest access without client", env: "node-1", args: []string{"--guest-access-client-name="}, wantErr: "--guest-access-client-name"},
		{name: "no guest access", env: "node-1", args: []string{"--guest-access-address=", "--guest-access-client-ca-file="}},
		{name: "no tun device plugin", env: "node-1", args: []string{"--tun-devices=0", "--device-plugin-dir="}},
		{name: "negative tun devices", env: "node-1", args: []string{"--tun-devices=-1"}, wantErr: "--tun-devices"},
		{name: "tun devices without a directory", env: "node-1", args: []string{"--device-plugin-dir="}, wantErr: "--device-plugin-dir"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("NODE_NAME", tt.env)
			o := NewOptions()
			fs := pflag.NewFlagSet("virt-handler", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			err := o.validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("validate() = %v, want no error", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("validate() = %v, want an error about %s", err, tt.wantErr)
			}
			if err == nil && o.KubeletRoot != "/var/lib/kubelet" {
				t.Errorf("kubelet root = %q, want the default /var/lib/kubelet", o.KubeletRoot)
			}
		})
	}
}

func TestDevicePluginDefaults(t *testing.T) {
	o := NewOptions()
	if o.DevicePluginDir != "/var/lib/kubelet/device-plugins" || o.TunDevices != 110 {
		t.Errorf("--device-plugin-dir %q --tun-devices %d, want the kubelet's directory and its default maxPods (110)", o.DevicePluginDir, o.TunDevices)
	}
}
