package report

import (
	"reflect"
	"testing"
)

func TestSuiteFlags(t *testing.T) {
	pair := func(kind FlagKind, a, b string) Flag {
		return Flag{Kind: kind, Runs: []string{a, b}, Message: a + " vs " + b}
	}
	security := map[string]string{
		"k-plain": "plain", "k-tls": "tls", "k-tls-again": "tls",
		"p-none": "", "e-existing": "",
	}
	flags := []Flag{
		pair(FlagSecurity, "k-plain", "k-tls"),     // the dimension under study: left out
		pair(FlagSecurity, "k-tls", "k-tls-again"), // one setting, two securities: stays
		pair(FlagSecurity, "k-tls", "p-none"),      // a system without securities: stays
		pair(FlagSecurity, "e-existing", "p-none"), // no labels at all: stays
		pair(FlagTestbed, "k-plain", "k-tls"),      // not security: stays
		{Kind: FlagLoadGenerator, Runs: []string{"k-plain"}},
	}
	kept, left := SuiteFlags(flags, security)
	if left != 1 {
		t.Errorf("left out %d, want 1", left)
	}
	if want := append([]Flag{}, flags[1:]...); !reflect.DeepEqual(kept, want) {
		t.Errorf("kept %v, want %v", kept, want)
	}
	if SuiteSecurityNote(0) != "" || SuiteSecurityNote(1) == "" {
		t.Error("a note without flags left out, or none with")
	}
}
