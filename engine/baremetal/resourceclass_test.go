package baremetal

import "testing"

// Expected values printed by os_resource_classes.normalize_name (the code
// nova uses) from Debian's python3-os-resource-classes.
func TestNormalizeResourceClassMatchesNova(t *testing.T) {
	cases := map[string]string{
		"baremetal-gold": "CUSTOM_BAREMETAL_GOLD",
		"baremetal":      "CUSTOM_BAREMETAL",
		"gold.1":         "CUSTOM_GOLD_1",
		"gold-1":         "CUSTOM_GOLD_1",
		"ß":              "CUSTOM__",
		"straße":         "CUSTOM_STRA_E",
		"":               "CUSTOM_",
		"-":              "CUSTOM__",
		"a  b":           "CUSTOM_A_B",
		"CUSTOM_FOO":     "CUSTOM_CUSTOM_FOO",
		"été":            "CUSTOM__T_",
		"x_y":            "CUSTOM_X_Y",
		"Mixed.Case-9":   "CUSTOM_MIXED_CASE_9",
		"a\u2028b":       "CUSTOM_A_B",
	}
	for in, want := range cases {
		if got := NormalizeResourceClass(in); got != want {
			t.Errorf("NormalizeResourceClass(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidCustomName(t *testing.T) {
	for name, ok := range map[string]bool{
		"CUSTOM_GOLD": true, "CUSTOM_": false, "CUSTOM__": true, "VCPU": false,
		"CUSTOM_gold": false, "CUSTOM_" + string(make([]byte, 250)): false,
	} {
		if err := ValidCustomName(name); (err == nil) != ok {
			t.Errorf("ValidCustomName(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}

func FuzzNormalizeResourceClass(f *testing.F) {
	for _, s := range []string{"baremetal-gold", "ß", "", "a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := NormalizeResourceClass(s)
		if s != "" && ValidCustomName(got) != nil && len(got) <= MaxNameLen {
			t.Fatalf("non-empty %q normalised to invalid %q", s, got)
		}
	})
}
