package builder

import (
	"context"
	"fmt"
	"strings"

	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/native/internal/llm"
)

// LLMProber asks an OpenAI-compatible chat model the three counterfactual probes, with
// direction-conditioned prompts. It also serves as the judge channel. Answers are cached on
// disk by the client, so an interrupted build resumes and a rebuild repeats no call.
type LLMProber struct {
	Client   *llm.Client
	Progress func(stage string, done, total int)
}

const probeSystem = `You evaluate dependencies between skills that an AI agent can use. ` +
	`A skill is a documented procedure or tool. Answer only with a JSON object {"score": x} ` +
	`where x is a number between 0 and 1.`

// skillCard renders a skill for a prompt: name, description and the head of its body.
func skillCard(s ingest.Skill) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\ndescription: %s\n", s.Name, oneLine(s.Description, 400))
	if len(s.Inputs) > 0 {
		fmt.Fprintf(&b, "inputs: %s\n", fieldNames(s.Inputs))
	}
	if len(s.Outputs) > 0 {
		fmt.Fprintf(&b, "outputs: %s\n", fieldNames(s.Outputs))
	}
	if body := oneLine(s.Body, 600); body != "" {
		fmt.Fprintf(&b, "excerpt: %s\n", body)
	}
	return b.String()
}

func fieldNames(fs []ingest.Field) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// probePrompt is the prompt of one probe. A is the candidate prerequisite, B the skill that
// would depend on it.
func probePrompt(skills []ingest.Skill, p Probe) llm.Prompt {
	a, b := skillCard(skills[p.Source]), skillCard(skills[p.Target])
	var q string
	switch p.Kind {
	case probeRemoval:
		q = fmt.Sprintf("Skill A:\n%s\nSkill B:\n%s\nAn agent must carry out skill B, but skill A has been "+
			"removed from its library. How much is carrying out B impaired by the absence of A? "+
			"1 means B cannot be completed without A; 0 means A's absence makes no difference to B.", a, b)
	case probeSubstitution:
		s := skillCard(skills[p.Substitute])
		q = fmt.Sprintf("Skill A:\n%s\nSkill B:\n%s\nSkill S:\n%s\nAn agent must carry out skill B. "+
			"Skill A is replaced by skill S. How much worse does B go with S in place of A? "+
			"1 means S cannot provide what B needs from A; 0 means S serves B just as well as A.", a, b, s)
	case probeReorder:
		q = fmt.Sprintf("Skill A:\n%s\nSkill B:\n%s\nIn a procedure that uses both, A normally comes "+
			"before B. How incoherent would it be to run B first and A afterwards? "+
			"1 means the reversed order makes no sense; 0 means either order works equally well.", a, b)
	}
	return llm.Prompt{Kind: p.Kind.String(), System: probeSystem, User: q}
}

// judgePrompt is the judge channel's question about the edge A → B.
func judgePrompt(skills []ingest.Skill, a, b int) llm.Prompt {
	q := fmt.Sprintf("Skill A:\n%s\nSkill B:\n%s\nDoes skill A support or precede skill B in a typical "+
		"task — does B use what A produces, need A done first, or is A a check or recovery step for B? "+
		"1 means A clearly supports or precedes B; 0 means they are unrelated or the direction is wrong.",
		skillCard(skills[a]), skillCard(skills[b]))
	return llm.Prompt{Kind: "judge", System: probeSystem, User: q}
}

// Name implements Prober and judger.
func (p *LLMProber) Name() string { return "llm" }

// Probe implements Prober.
func (p *LLMProber) Probe(ctx context.Context, skills []ingest.Skill, probes []Probe) ([]ProbeResult, error) {
	ps := make([]llm.Prompt, len(probes))
	for i, pr := range probes {
		ps[i] = probePrompt(skills, pr)
	}
	return p.ask(ctx, "probes", ps)
}

// Judge implements judger.
func (p *LLMProber) Judge(ctx context.Context, skills []ingest.Skill, pairs [][2]int) ([]ProbeResult, error) {
	ps := make([]llm.Prompt, len(pairs))
	for i, pr := range pairs {
		ps[i] = judgePrompt(skills, pr[0], pr[1])
	}
	return p.ask(ctx, "judge", ps)
}

// uncached counts the prompts of probes that would need a call (for --dry-run).
func (p *LLMProber) uncached(skills []ingest.Skill, probes []Probe, pairs [][2]int) int {
	n := 0
	for _, pr := range probes {
		if !p.Client.Cached(probePrompt(skills, pr)) {
			n++
		}
	}
	for _, pr := range pairs {
		if !p.Client.Cached(judgePrompt(skills, pr[0], pr[1])) {
			n++
		}
	}
	return n
}

func (p *LLMProber) ask(ctx context.Context, stage string, ps []llm.Prompt) ([]ProbeResult, error) {
	var progress func(done, total int)
	if p.Progress != nil {
		progress = func(done, total int) { p.Progress(stage, done, total) }
	}
	answers := p.Client.ScoreAll(ctx, ps, progress)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("interrupted; %d answers are cached and will not be asked again: %w",
			countDone(answers), err)
	}
	out := make([]ProbeResult, len(answers))
	for i, a := range answers {
		switch a.Outcome {
		case llm.Failed:
			raw := a.Raw
			if raw == "" && a.Err != nil {
				raw = a.Err.Error()
			}
			out[i] = ProbeResult{Raw: raw}
		default:
			out[i] = ProbeResult{E: a.Score, OK: true, Cached: a.Outcome == llm.Cached}
		}
	}
	return out, nil
}

func countDone(as []llm.Answer) int {
	n := 0
	for _, a := range as {
		if a.Outcome != llm.Failed {
			n++
		}
	}
	return n
}
