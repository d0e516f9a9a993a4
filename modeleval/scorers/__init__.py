"""Model-side scoring, free of Django: loading, log-likelihood multiple choice,
generation and letter extraction, rating-token and yes/no scores with few-shot
selection, pairwise judging, position bias, prompt templates."""
