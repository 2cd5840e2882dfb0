"""Learning: ELM family, SS-ELM, LapSVM, graphs, ACA/HACA, clustering, artifacts, evaluation."""
