"""One-off scripts of past experiments, reached from no Makefile target,
shell script, Go code or test (issue 44): the evaluation of fine-tuned
members (learn_eval, evalpt) and the frozen-backbone MobileNetV2 ensemble
(train_mnv2_ensemble). Nothing else imports them. Run from models/train:
python3 -m experiments.learn_eval, ..."""
