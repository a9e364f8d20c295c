package v1alpha1

import (
	"strings"
	"testing"
)

// The CRD's pattern is held to Parse in internal/admission
// (TestCRDFaultRules), where the generated CRD is at hand.

func TestFaultTargetParse(t *testing.T) {
	cases := []struct {
		target  FaultTarget
		role    FaultRole
		ordinal int
		ok      bool
	}{
		{"broker-0", RoleBroker, 0, true},
		{"broker-12", RoleBroker, 12, true},
		{"controller-2", RoleController, 2, true},
		{"bookie-1", RoleBookie, 1, true},
		{"zookeeper-9999", RoleZooKeeper, 9999, true},
		{"leader", RoleLeader, -1, true},
		{"broker-01", "", 0, false},
		{"broker-10000", "", 0, false},
		{"broker-+1", "", 0, false},
		{"broker--1", "", 0, false},
		{"broker-", "", 0, false},
		{"broker", "", 0, false},
		{"-1", "", 0, false},
		{"leader-0", "", 0, false},
		{"bookkeeper-0", "", 0, false},
		{"Broker-0", "", 0, false},
		{"", "", 0, false},
	}
	for _, tc := range cases {
		t.Run(string(tc.target), func(t *testing.T) {
			role, n, err := tc.target.Parse()
			if (err == nil) != tc.ok {
				t.Fatalf("Parse(%q) error %v, want ok %v", tc.target, err, tc.ok)
			}
			if err != nil {
				if !strings.Contains(err.Error(), "<role>-<ordinal>") {
					t.Errorf("the error does not say what a target looks like: %v", err)
				}
			} else if role != tc.role || n != tc.ordinal {
				t.Errorf("Parse(%q) = %s %d, want %s %d", tc.target, role, n, tc.role, tc.ordinal)
			}
		})
	}
}
