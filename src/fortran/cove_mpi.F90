! The module cove_mpi: a connect that is collective over an MPI
! communicator, as Python's connect(comm=...) and C++'s
! cove::connect(MPI_Comm) are. In libcove-fortran-mpi (cove::fortran_mpi),
! built where MPI has Fortran bindings, so that the module cove itself
! needs no MPI.
!
! cove_connect_comm(client, comm [, target] [, timeout_ms]): collective
! over comm (a handle of the mpi module; with mpi_f08, pass comm%MPI_VAL).
! Rank 0 resolves target (a connection file, addresses, or absent for
! COVE_CONNECT), waiting up to timeout_ms (10000) for the file, and passes
! the servers' addresses and the group's secret to the other ranks of comm
! only; every rank then connects. Every rank returns the same status when
! rank 0 fails, and cove_last_error() then says rank 0's message. A member
! of the group that does not answer within 2 s is taken for dead, as a
! connect through the file does. Blocking; call it from one thread per rank.
module cove_mpi
  use, intrinsic :: iso_c_binding, only: c_null_char
  use, intrinsic :: iso_fortran_env, only: int64
  use mpi
  use cove, only: cove_client, cove_connect_ticket, cove_connect_with_ticket, cove_last_error, COVE_OK
  use cove_c_api, only: c_own_error_set
  implicit none
  private
  public :: cove_connect_comm

contains

  integer function cove_connect_comm(client, comm, target, timeout_ms) result(status)
    type(cove_client), intent(inout) :: client
    integer, intent(in) :: comm
    character(*), intent(in), optional :: target
    integer(int64), intent(in), optional :: timeout_ms
    character(:), allocatable :: ticket, message
    integer :: rank, length, ierr
    integer(int64) :: wait

    wait = 10000
    if (present(timeout_ms)) wait = timeout_ms
    call MPI_Comm_rank(comm, rank, ierr)
    if (rank == 0) then
      if (present(target)) then
        status = cove_connect_ticket(ticket, target, wait)
      else
        status = cove_connect_ticket(ticket, timeout_ms=wait)
      end if
      if (status == COVE_OK) then
        message = ticket
      else
        message = cove_last_error()
      end if
      length = len(message)
    end if
    call MPI_Bcast(status, 1, MPI_INTEGER, 0, comm, ierr)
    call MPI_Bcast(length, 1, MPI_INTEGER, 0, comm, ierr)
    if (rank /= 0) allocate(character(length) :: message)
    call MPI_Bcast(message, length, MPI_CHARACTER, 0, comm, ierr)
    if (status /= COVE_OK) then
      if (rank /= 0) call c_own_error_set(message // c_null_char)
      return
    end if
    status = cove_connect_with_ticket(client, message, wait)
  end function

end module
