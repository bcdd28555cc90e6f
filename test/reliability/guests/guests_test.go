package guests

import (
	"reflect"
	"testing"
)

// TestJudge: a guest whose QEMU is not the one it had at the fault is
// lost, whether it has none or another; a guest with no QEMU at the fault
// cannot be lost, and is counted apart, so that a fault struck before any
// guest had one shows as such (the suite used to kill virt-handler before
// any guest had a QEMU, and reported 0 lost, which it could not but be).
func TestJudge(t *testing.T) {
	tests := []struct {
		name           string
		atFault, after map[string][]int
		want           Fate
	}{
		{
			name:    "kept",
			atFault: map[string][]int{"a": {10}, "b": {20}},
			after:   map[string][]int{"a": {10}, "b": {20}},
			want:    Fate{Running: []string{"a", "b"}},
		},
		{
			name:    "restarted under a new QEMU",
			atFault: map[string][]int{"a": {10}, "b": {20}},
			after:   map[string][]int{"a": {10}, "b": {21}},
			want:    Fate{Running: []string{"a", "b"}, Lost: []string{"b"}},
		},
		{
			name:    "gone",
			atFault: map[string][]int{"a": {10}},
			after:   map[string][]int{"a": nil},
			want:    Fate{Running: []string{"a"}, Lost: []string{"a"}, Doubled: []string{"a"}},
		},
		{
			name:    "a second QEMU beside the first",
			atFault: map[string][]int{"a": {10}},
			after:   map[string][]int{"a": {10, 11}},
			want:    Fate{Running: []string{"a"}, Doubled: []string{"a"}},
		},
		{
			name:    "started after the fault: not running at it, not lost",
			atFault: map[string][]int{"a": nil, "b": {20}},
			after:   map[string][]int{"a": {11}, "b": {20}},
			want:    Fate{Running: []string{"b"}},
		},
		{
			name:    "no guest had a QEMU at the fault",
			atFault: map[string][]int{"a": nil, "b": nil},
			after:   map[string][]int{"a": {11}, "b": {21}},
			want:    Fate{},
		},
		{
			name:    "missing after the fault",
			atFault: map[string][]int{"a": {10}},
			after:   map[string][]int{},
			want:    Fate{Running: []string{"a"}, Lost: []string{"a"}, Doubled: []string{"a"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Judge(tt.atFault, tt.after); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Judge = %+v, want %+v", got, tt.want)
			}
		})
	}
}
