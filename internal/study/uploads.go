package study

import "github.com/closer-lab/closer/internal/media"

// UploadReport is what one image upload added and refused, why an image
// upload was refused whole, or why a gold-triplet file was refused.
type UploadReport struct {
	Added    int               `json:"added"`
	Rejected []media.Rejection `json:"rejected"`
	// Refused is the reason an image upload was refused whole (no file
	// chosen, too large, too many files, unreadable): nothing was added.
	// "" when the upload's files were checked one by one.
	Refused string `json:"refused,omitempty"`
	// GoldRefused is the reason a gold-triplet file was refused whole
	// (nothing stored); "" in an image upload's report.
	GoldRefused string `json:"gold_refused,omitempty"`
}
