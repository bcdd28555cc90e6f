package storequota

import (
	"errors"
	"strings"
	"testing"
)

const mib = 1 << 20

func TestAssess(t *testing.T) {
	quota := int64(512 * mib)
	tests := []struct {
		name     string
		members  []Member
		alarm    bool
		quota    int64
		want     Level
		largest  string
		contains []string
	}{{
		name:    "well below",
		members: []Member{{Endpoint: "a", DBSize: 100 * mib, DBSizeInUse: 90 * mib}},
		quota:   quota, want: OK, largest: "a",
	}, {
		name:    "just below 80 %",
		members: []Member{{Endpoint: "a", DBSize: 409 * mib, DBSizeInUse: 400 * mib}},
		quota:   quota, want: OK, largest: "a",
	}, {
		name: "one member at 80 %: the largest counts",
		members: []Member{{Endpoint: "a", DBSize: 100 * mib, DBSizeInUse: 90 * mib},
			{Endpoint: "b", DBSize: 410 * mib, DBSizeInUse: 400 * mib}, {Endpoint: "c", DBSize: 200 * mib}},
		quota: quota, want: NearQuota, largest: "b",
		contains: []string{"nears its quota", "(b) is 410.0 MiB of the 512.0 MiB quota", "the data itself grew"},
	}, {
		name:    "near the quota, mostly free pages: defragment",
		members: []Member{{Endpoint: "a", DBSize: 500 * mib, DBSizeInUse: 50 * mib}},
		quota:   quota, want: NearQuota, largest: "a",
		contains: []string{"a defragmentation gives the free pages back"},
	}, {
		name:    "the alarm wins, whatever the sizes",
		members: []Member{{Endpoint: "a", DBSize: 10 * mib, DBSizeInUse: 10 * mib}},
		alarm:   true, quota: quota, want: NoSpace, largest: "a",
		contains: []string{"NOSPACE alarm is raised", "docs/runbooks.md"},
	}, {
		name:    "a member that does not answer is not the largest",
		members: []Member{{Endpoint: "a", Err: errors.New("down")}, {Endpoint: "b", DBSize: 420 * mib, DBSizeInUse: 420 * mib}},
		quota:   quota, want: NearQuota, largest: "b",
	}, {
		name:    "nobody answers: no size to judge",
		members: []Member{{Endpoint: "a", Err: errors.New("down")}},
		quota:   quota, want: OK, largest: "",
	}, {
		name:    "unknown quota: only the alarm counts",
		members: []Member{{Endpoint: "a", DBSize: 5000 * mib}},
		quota:   0, want: OK, largest: "a",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Assess(tt.members, tt.alarm, tt.quota, DefaultThreshold)
			if r.Level != tt.want || r.Largest.Endpoint != tt.largest {
				t.Errorf("Assess = %v (largest %q), want %v (largest %q)", r.Level, r.Largest.Endpoint, tt.want, tt.largest)
			}
			for _, s := range tt.contains {
				if !strings.Contains(r.Message(), s) {
					t.Errorf("message %q lacks %q", r.Message(), s)
				}
			}
		})
	}
}
