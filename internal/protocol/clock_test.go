package protocol

import "testing"

func TestEstimateOffset(t *testing.T) {
	tests := []struct {
		name       string
		samples    []ClockSample
		wantOffset int64
		wantUncert int64
		wantErr    bool
	}{
		{
			name:       "one symmetric sample",
			samples:    []ClockSample{{SentMicros: 1000, WorkerMicros: 6050, ReceivedMicros: 1100}},
			wantOffset: 5000, wantUncert: 50,
		},
		{
			name: "smallest round trip wins over a skewed slow one",
			samples: []ClockSample{
				{SentMicros: 0, WorkerMicros: 900, ReceivedMicros: 1000},     // rtt 1000, biased
				{SentMicros: 2000, WorkerMicros: 1910, ReceivedMicros: 2020}, // rtt 20: offset -100
				{SentMicros: 3000, WorkerMicros: 3500, ReceivedMicros: 3400}, // rtt 400
			},
			wantOffset: -100, wantUncert: 10,
		},
		{
			name:    "negative round trips only",
			samples: []ClockSample{{SentMicros: 10, WorkerMicros: 5, ReceivedMicros: 0}},
			wantErr: true,
		},
		{name: "no samples", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EstimateOffset(tt.samples)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("want an error, got %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.OffsetMicros != tt.wantOffset || got.UncertaintyMicros != tt.wantUncert {
				t.Errorf("got offset %d ± %d, want %d ± %d", got.OffsetMicros, got.UncertaintyMicros, tt.wantOffset, tt.wantUncert)
			}
		})
	}
}
