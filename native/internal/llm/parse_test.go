package llm

import (
	"math"
	"testing"
)

var parseTests = []struct {
	name string
	in   string
	want float64
	ok   bool
}{
	// Rule 1: JSON.
	{"json", `{"score": 0.7}`, 0.7, true},
	{"json compact", `{"score":1}`, 1, true},
	{"json zero", `{"score": 0}`, 0, true},
	{"json exponent", `{"score": 7e-1}`, 0.7, true},
	{"json fenced", "```json\n{\"score\": 0.85}\n```", 0.85, true},
	{"json in text", `Sure! Here is my answer: {"score": 0.25} Hope this helps, 1`, 0.25, true},
	{"json string score", `{"score": "0.6"}`, 0.6, true},
	{"json string percent", `{"score": "60%"}`, 0.6, true},
	{"json key case", `{"Score": 0.4}`, 0.4, true},
	{"json other keys", `{"reason": "s_j needs s_i's output", "score": 0.9}`, 0.9, true},
	{"json nested", `{"result": {"score": 0.3}}`, 0.3, true},
	{"json first object lacks score", `{"note": 1} then {"score": 0.2}`, 0.2, true},
	{"json out of range is final", `{"score": 7} though 0.5 maybe`, 0, false},
	{"json negative", `{"score": -0.1}`, 0, false},
	{"json string NaN", `{"score": "NaN"}`, 0, false},
	{"json string words", `{"score": "high"}`, 0, false},
	{"json bool", `{"score": true}`, 0, false},
	{"json null", `{"score": null}`, 0, false},
	{"broken json falls back", `{score: 0.7}`, 0.7, true},
	{"single quotes fall back", `{'score': 0.35}`, 0.35, true},

	// Rule 2: a trailing number.
	{"bare", "0.7", 0.7, true},
	{"bare leading dot", ".7", 0.7, true},
	{"bare one", "1", 1, true},
	{"bare zero", "0", 0, true},
	{"spaces", "  0.55 \n", 0.55, true},
	{"text then number", "The removal clearly impairs the target, so: 0.8", 0.8, true},
	{"trailing period", "My answer is 0.8.", 0.8, true},
	{"markdown bold", "Score: **0.65**", 0.65, true},
	{"trailing number wins over earlier", "Step 1 done; step 2 gives 0.3", 0.3, true},
	{"percentage", "70%", 0.7, true},
	{"percentage in text", "I am 85% sure.", 0.85, true},
	{"score 7 is not rescaled", "score: 7", 0, false},
	{"trailing out of range is final", "first 0.5, but finally 7", 0, false},
	{"percentage over 100", "150%", 0, false},
	{"negative", "-0.3", 0, false},
	{"negative in text", "score: -1", 0, false},

	// Rule 3: the first number in [0,1].
	{"first in range", "I'd say 0.6 overall.", 0.6, true},
	{"skips out of range", "Out of 12 steps, about 0.4 are affected here.", 0.4, true},
	{"fraction of one", "0.8 out of 1", 0.8, true},
	{"fraction slash one", "0.9/1", 0.9, true},
	{"fraction of ten", "7/10", 0, false},
	{"fraction words", "3 out of 5", 0, false},
	{"half is not one", "1/2", 0, false},
	{"scale range ignored", "On a scale from 0 to 1 this is likely.", 0, false},
	{"scale dash ignored", "On a 0-1 scale: probably.", 0, false},
	{"scale spaced dash ignored", "On a 0 - 1 scale: probably.", 0, false},
	{"scale brackets ignored", "a value in [0, 1] is required", 0, false},
	{"scale between ignored", "between 0 and 1 I cannot tell", 0, false},
	{"scale then answer", "On a scale from 0 to 1, I give 0.7", 0.7, true},
	{"glued to letters", "gpt4 thinks so, 7th time", 0, false},
	{"version", "v1.2.3 release", 0, false},
	{"bare version", "1.2.3", 0, false},

	// Nothing to parse.
	{"empty", "", 0, false},
	{"blank", " \n\t", 0, false},
	{"garbage", "I cannot answer that question.", 0, false},
	{"NaN", "NaN", 0, false},
	{"Inf", "Inf", 0, false},
	{"long digits", "99999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999", 0, false},
}

func TestParseScore(t *testing.T) {
	for _, tt := range parseTests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseScore(tt.in)
			if ok != tt.ok || math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("ParseScore(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func FuzzParseScore(f *testing.F) {
	for _, tt := range parseTests {
		f.Add(tt.in)
	}
	f.Add("{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{\"score\": 0.5}")
	f.Add("é5 ü.7 -.5 --1 0.5%% 1e5")
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := ParseScore(s)
		if ok && (math.IsNaN(v) || v < 0 || v > 1) {
			t.Fatalf("ParseScore(%q) = %v, true: outside [0,1]", s, v)
		}
	})
}

func BenchmarkParseScore(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		ParseScore("```json\n{\"score\": 0.85}\n```")
		ParseScore("The removal clearly impairs the target, so: 0.8")
	}
}
