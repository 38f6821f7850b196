//! A join as the GPU takes it: made whole from a worker's join ([`whole`]), and cut into
//! parts that the GPU answers one by one ([`parts`]).

mod parts;
mod whole;

pub(crate) use whole::Request;
