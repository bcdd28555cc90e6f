package launcher

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestOptions(t *testing.T) {
	for name, tc := range map[string]struct {
		args    []string
		wantErr string
	}{
		"complete":       {[]string{"--vmi-namespace=ns", "--vmi-name=vm", "--vmi-uid=u", "--grace-period-seconds=5"}, ""},
		"no uid":         {[]string{"--vmi-namespace=ns", "--vmi-name=vm"}, "are required"},
		"negative grace": {[]string{"--vmi-namespace=ns", "--vmi-name=vm", "--vmi-uid=u", "--grace-period-seconds=-1"}, "must not be negative"},
		"no private dir": {[]string{"--vmi-namespace=ns", "--vmi-name=vm", "--vmi-uid=u", "--private-dir="}, "--private-dir"},
		"no start bound": {[]string{"--vmi-namespace=ns", "--vmi-name=vm", "--vmi-uid=u", "--startup-timeout=0s"}, "--startup-timeout"},
	} {
		t.Run(name, func(t *testing.T) {
			o := NewOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := o.Validate()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tc.wantErr)
			}
		})
	}
}
