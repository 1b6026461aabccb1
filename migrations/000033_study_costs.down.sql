DROP TABLE study_estimates;
DROP TABLE study_costs;
