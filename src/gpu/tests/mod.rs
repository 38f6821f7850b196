//! The GPU engine against the CPU: kernels on random keys against brute force, and whole
//! plans task by task. Every test runs on whatever GPU the machine has (Mesa's lavapipe in
//! CI) and says it was skipped where there is none.

mod common;
mod joins;
mod plans;
mod tasks;
mod weighing;
