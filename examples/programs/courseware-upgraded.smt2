; The "upgraded" Courseware configuration of the paper's §6, as a user model
; for isovet analyze --model courseware-upgraded.smt2.
; Enroll runs at PSI (its write conflicts are visible, visibility is causal
; among Enrolls):
(assert (forall ((a T) (b T))
  (=> (and (or (= (typ a) ty.Enroll) (= (typ b) ty.Enroll)) (WW a b)) (vis a b))))
; Selective serializability (Eq. 9) for these pairs of transaction types:
(assert (forall ((a T) (b T))
  (=> (and (= (typ a) ty.AddCourse) (= (typ b) ty.AddCourse) (ar a b)) (vis a b))))
(assert (forall ((a T) (b T))
  (=> (and (= (typ a) ty.AddStudent) (= (typ b) ty.AddStudent) (ar a b)) (vis a b))))
(assert (forall ((a T) (b T))
  (=> (and (or (and (= (typ a) ty.Enroll) (= (typ b) ty.RemCourse))
               (and (= (typ a) ty.RemCourse) (= (typ b) ty.Enroll))) (ar a b)) (vis a b))))
(assert (forall ((a T) (b T))
  (=> (and (or (and (= (typ a) ty.Enroll) (= (typ b) ty.RemStudent))
               (and (= (typ a) ty.RemStudent) (= (typ b) ty.Enroll))) (ar a b)) (vis a b))))
