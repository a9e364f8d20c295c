package worker

import "testing"

func TestRuntimeSettingsFor(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	for _, c := range []struct {
		name   string
		env    map[string]string
		cgroup string
		want   RuntimeSettings
	}{
		{"no limit", nil, "max\n", RuntimeSettings{GCPercent: 400}},
		{"unreadable cgroup", nil, "", RuntimeSettings{GCPercent: 400}},
		{"pod limit 2 GiB", nil, "2147483648\n", RuntimeSettings{GCPercent: 400, MemoryLimit: 1717986918}},
		{"GOGC set by the user", map[string]string{"GOGC": "100"}, "2147483648", RuntimeSettings{MemoryLimit: 1717986918}},
		{"GOMEMLIMIT set by the user", map[string]string{"GOMEMLIMIT": "1GiB"}, "2147483648", RuntimeSettings{GCPercent: 400}},
		{"both set", map[string]string{"GOGC": "off", "GOMEMLIMIT": "1GiB"}, "2147483648", RuntimeSettings{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := runtimeSettingsFor(env(c.env), c.cgroup); got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}
