package trial

import "testing"

func TestParseRankSpec(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want RankSpec
		ok   bool
	}{
		{"rank:8:2", RankSpec{N: 8, K: 2}, true},
		{" rank:3:2 ", RankSpec{N: 3, K: 2}, true},
		{"rank:9:8", RankSpec{N: 9, K: 8}, true},
		{"rank:10:2", RankSpec{}, false}, // n > 9
		{"rank:8:1", RankSpec{}, false},  // k < 2
		{"rank:4:4", RankSpec{}, false},  // k = n
		{"rank:8", RankSpec{}, false},
		{"rank:x:2", RankSpec{}, false},
		{"odd-one-out:8:2", RankSpec{}, false},
	} {
		got, err := ParseRankSpec(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseRankSpec(%q) = %v, %v", c.in, got, err)
		}
		if c.ok {
			if back, err := ParseRankSpec(got.String()); err != nil || back != got {
				t.Errorf("%v does not read back from %q: %v, %v", got, got.String(), back, err)
			}
		}
	}
}
