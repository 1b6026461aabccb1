package study

import (
	"errors"
	"regexp"
	"strings"

	"github.com/closer-lab/closer/internal/design"
)

// Arm is one design a study runs beside others.
type Arm struct {
	// Name identifies the arm in the export and on the dashboard:
	// 1 to 32 lower-case letters, digits and dashes, unique in the study.
	Name string `json:"name"`
	// Design is the arm's design (random, landmark-k1, landmark-k2, basis
	// or active) and Config its settings, checked as a study's are.
	Design string       `json:"design"`
	Config DesignConfig `json:"config"`
	// Share is the arm's share of the participants; the shares sum to 1
	// (design.CheckShares).
	Share float64 `json:"share"`
}

// Bounds of a study's arms and held-out share.
const (
	MinArms = 2
	MaxArms = 8
	// MaxHeldoutShare bounds the share of questions held out.
	MaxHeldoutShare = 0.5
)

var armNameRE = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)

// checkArms normalises and checks a study's arms for the given item labels
// (nil: no items yet): their number, names, designs, settings and shares.
func CheckArms(arms []Arm, labels []string) error {
	if len(arms) < MinArms || len(arms) > MaxArms {
		return Errorf(KindInvalid, "a study runs between %d and %d arms (%d given); leave the arms out for one design", MinArms, MaxArms, len(arms))
	}
	seen := map[string]bool{}
	shares := make([]float64, len(arms))
	for i := range arms {
		a := &arms[i]
		if !armNameRE.MatchString(a.Name) {
			return Errorf(KindInvalid, "arm %d: the name %q must be 1 to 32 lower-case letters, digits and dashes", i+1, a.Name)
		}
		if seen[a.Name] {
			return Errorf(KindInvalid, "two arms are named %q", a.Name)
		}
		seen[a.Name] = true
		switch a.Design {
		case DesignRandom, DesignLandmarkK1, DesignLandmarkK2, DesignBasis, DesignActive:
		default:
			return Errorf(KindInvalid, "arm %s: unknown design %q (random, landmark-k1, landmark-k2, basis or active)", a.Name, a.Design)
		}
		if err := CheckConfig(a.Design, &a.Config, labels); err != nil {
			var e *Error
			if !errors.As(err, &e) {
				return err
			}
			return Errorf(KindInvalid, "arm %s: %s", a.Name, e.Msg)
		}
		shares[i] = a.Share
	}
	if err := design.CheckShares(shares); err != nil {
		return Errorf(KindInvalid, "the arms' shares must be positive and sum to 1 (%s)", strings.TrimPrefix(err.Error(), "design: "))
	}
	return nil
}

// ArmsOf returns the arms a study runs: its Arms, or its one implicit arm
// (its design and the settings cfg, named after the design, share 1).
func ArmsOf(st Study, cfg DesignConfig) []Arm {
	if len(st.Arms) > 0 {
		return st.Arms
	}
	return []Arm{{Name: st.Design, Design: st.Design, Config: cfg, Share: 1}}
}

// ArmName is the name of arm i of study st: the arm's, or the study's
// design for its implicit arm 0 (and for an arm it does not have).
func ArmName(st Study, i int) string {
	if i >= 0 && i < len(st.Arms) {
		return st.Arms[i].Name
	}
	return st.Design
}
